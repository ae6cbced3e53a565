"""The cross-batch key rule, named once for both sides (docs/plan-format.md).

In ``append`` publication with a business key, a batch whose key the target already holds would
duplicate that key across batches. The compiler puts this rule in the plan; the validation
engine cannot judge it (it sees the batch, not the target) and reports it ``not_executed``; the
gate's ``batch_keys`` step measures it against the target and fills its report entry, so the
branch quarantines such a batch instead of the publish failing.
"""

from __future__ import annotations

RULE_ID = "key.unique_across_batches"
KIND = "unique_across_batches"
SCOPE = "target"  # judged against the target table: a verdict on the batch, no row is marked
