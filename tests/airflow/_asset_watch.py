"""Airflow's own path from a DAG file to a watched Asset, for the event-driven gate tests: sync the
DAG folder to the database (as the DAG processor does), unpause a DAG (Airflow watches the Assets
of active DAGs only), read the Asset events and the Asset's state store."""

from __future__ import annotations

import json


def sync_dag_folder() -> None:
    """Parse the DAG folder and write what it holds to the database, as the DAG processor does
    (and as ``dag.test()`` does before a run): DAGs, Assets and their watchers' triggers."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    with create_session() as session:
        manager.sync_bundles_to_db(session=session)
    for bundle in manager.get_all_dag_bundles():
        bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)


def unpause(dag_id: str) -> None:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        session.get(DagModel, dag_id).is_paused = False


def asset_events(asset_name: str) -> list[dict]:
    """The payloads of the events of the Asset, oldest first."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        events = session.scalars(select(AssetEvent).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
                                 .where(AssetModel.name == asset_name).order_by(AssetEvent.id))
        return [event.extra["payload"] for event in events]


def asset_state(asset_name: str, key: str):
    """A value of the Asset's state store (what a watcher keeps across triggerer restarts)."""
    from airflow.models.asset import AssetModel
    from airflow.models.asset_state_store import AssetStateStoreModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        value = session.scalar(select(AssetStateStoreModel.value)
                               .join(AssetModel, AssetStateStoreModel.asset_id == AssetModel.id)
                               .where(AssetModel.name == asset_name, AssetStateStoreModel.key == key))
    return None if value is None else json.loads(value)
