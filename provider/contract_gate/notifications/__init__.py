"""Sending gate alerts through Airflow notifiers named in the contract's gate settings.

This module stays free of Airflow imports so the freshness bookkeeping can name notifiers
without paying for ``airflow.sdk``; :mod:`.dispatch` does the sending.
"""

from __future__ import annotations


def notifier_keys(notifiers: list[dict]) -> list[str]:
    """Stable names for configured notifiers, by position and class: ``"0:pkg.SlackNotifier"``."""
    return [f"{index}:{ref['class']}" for index, ref in enumerate(notifiers)]
