"""Unity Catalog: the GRANTs that draw a gate's access boundary on Databricks (``grants``)."""
