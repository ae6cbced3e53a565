"""The gate's pages: a report page per submission and a contracts page.

* :mod:`~contract_gate.pages.data`: what the pages read (contracts, decisions, report JSON);
* :mod:`~contract_gate.pages.report_view`, :mod:`~contract_gate.pages.contracts_view`,
  :mod:`~contract_gate.pages.chart`: that data shaped for a page;
* :mod:`~contract_gate.pages.render` and ``templates/``: the HTML (autoescaped Jinja, inline CSS
  and SVG, no script), :mod:`~contract_gate.pages.build` from folder to page;
* :mod:`~contract_gate.pages.app` and :mod:`~contract_gate.pages.plugin`: served on Airflow's
  api-server behind Airflow's own authentication; :mod:`~contract_gate.pages.links`: the gate
  tasks' extra link to their submission's report.

``contract-gate report ... --html`` and ``contract-gate status --html`` write the same pages as
single files. Importing this package imports neither Airflow nor pyspark.
"""
