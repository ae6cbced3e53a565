"""Spark side, gate steps that write Delta tables: stage, publish (and split), quarantine,
batch keys, retention, the target table, and the tagged commits they share."""
