"""Spark side, validation: judge one candidate against a plan (engine, rule columns, schema
comparison, row diagnostics, unfit values) and write the report."""
