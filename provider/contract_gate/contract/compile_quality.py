"""The quality entries of a schema object or property (``type: text``, ``library`` metrics,
``sql`` queries, ``custom`` spark-sql and DQX checks) as plan rules, nested fields' included."""

from __future__ import annotations

from contract_gate.contract import dqx, patterns, rules
from contract_gate.contract.compile_state import CompileState, enforceable
from contract_gate.contract.errors import yaml_path
from contract_gate.contract.settings import GATE_PROPERTY
from contract_gate_plan import batch_history
from contract_gate_plan.sql_allowlist import SqlNotSpark, check_query
from contract_gate_plan.sql_text import quote_identifier

_LIBRARY_ROW_METRICS = ("nullValues", "missingValues", "invalidValues")
# ODCS leaves severity free text: the words teams write, by what the gate does with the batch.
_ERROR_WORDS = ("error", "critical", "blocker", "fatal", "high", "major", "severe")
_WARNING_WORDS = ("warning", "warn", "info", "information", "informational", "low", "minor", "trivial")
# Other tools' names of a query's placeholders (datacontract-cli's {model}, the ODCS schema's
# ${table} and ${column}); the plan carries ours only.
_PLACEHOLDER_SYNONYMS = {"model": "object", "table": "object", "column": "property"}


class QualityCompiler:
    """Quality entries as rules, added to the compile's ``state``."""

    def __init__(self, state: CompileState) -> None:
        self.state = state

    # -- quality entries -----------------------------------------------------------------
    def value_types(self) -> dict[str, str]:
        """Column -> Spark type of what a check may name: the columns, then the nested fields by
        their dotted path (``user_profile.age``, ``lines[].sku``)."""
        return {**{name: field_type for name, (_, field_type) in self.state.nested_fields.items()}, **self.state.columns}

    def compile_quality(self, entries, base: str, column: str | None) -> None:
        for j, quality in enumerate(entries):
            path = f"{base}.quality[{j}]"
            try:
                self.compile_quality_entry(quality.model_dump(exclude_none=True), path, column)
            except rules.RuleError as exc:
                self.state.rule_error(path, exc)

    def compile_quality_entry(self, entry: dict, path: str, column: str | None) -> None:
        kind = entry.get("type", "library")
        common = {"severity": self.severity(entry.get("severity"), path), "description": entry.get("description")}
        id_key = "id" if "id" in entry else "name" if "name" in entry else None
        given = (entry[id_key], f"{path}.{id_key}") if id_key else (None, None)
        if id_key == "name":
            self.state.label_id_paths.add(f"{path}.name")
        history = self.history(entry, kind)
        if history is not None:
            common["history"] = history
        start = len(self.state.rules)
        self.compile_quality_kind(kind, entry, path, column, given, common)
        self.nest_rules(start, path, column, given, common)

    def history(self, entry: dict, kind: str) -> dict | None:
        """The entry's ``history`` bounds (``contract_gate_plan.batch_history``), from its
        ``contractGate`` custom property; only a rowCount or nullValues metric takes one."""
        for j, custom in enumerate(entry.get("customProperties") or []):
            if custom.get("property") != GATE_PROPERTY:
                continue
            key = ["customProperties", j, "value"]
            value = custom.get("value")
            if not isinstance(value, dict) or set(value) != {batch_history.SETTING}:
                raise rules.RuleError(f"a quality entry's {GATE_PROPERTY} entry is {{history: {{batches: N, "
                                      "within: F}}}", key)
            metric = entry.get("metric") or entry.get("rule")
            if kind != "library" or metric not in ("rowCount", "nullValues"):
                raise rules.RuleError("a history bounds a rowCount or a nullValues metric only",
                                      [*key, batch_history.SETTING])
            try:
                return batch_history.history_of(value[batch_history.SETTING]).as_json()
            except batch_history.HistoryError as exc:
                raise rules.RuleError(str(exc), [*key, batch_history.SETTING,
                                                 *([exc.key] if exc.key else [])]) from None
        return None

    def compile_quality_kind(self, kind: str, entry: dict, path: str, column: str | None, given: tuple,
                             common: dict) -> None:
        if kind == "text":
            self.state.add_rule(path, given[0] or f"{self.state.id_prefix(column)}.text", given[1], kind="text", scope="text",
                          columns=[column] if column else [], **common)
        elif kind == "library":
            self.compile_metric(entry, path, column, given, common)
        elif kind == "sql":
            self.compile_sql(entry, path, column, given, common)
        elif entry.get("engine") == "spark-sql":
            self.compile_custom_sql(entry, path, column, given, common)
        elif entry.get("engine") == "dqx":
            self.compile_dqx(entry, path, column, given, common)
        else:
            self.unsupported(path, column, given, common, f"a check of engine {entry.get('engine')!r} (the gate runs "
                             "custom checks of engines spark-sql and dqx)", "engine")

    def severity(self, value, path: str) -> str:
        """A rule's severity from ODCS' free text (any case): ``error`` or ``warning``. A word
        the gate does not know holds the batch (an error), with a lint warning naming it."""
        word = value.strip().lower() if isinstance(value, str) else value
        if word is None or word in _ERROR_WORDS:
            return "error"
        if word in _WARNING_WORDS:
            return "warning"
        self.state.warn(f"{path}.severity", f"severity {value!r} is not a word the gate knows "
                        f"({', '.join(_ERROR_WORDS)}: error; {', '.join(_WARNING_WORDS)}: warning): "
                        "it is held as an error")
        return "error"

    def nest_rules(self, start: int, path: str, column: str | None, given: tuple, common: dict) -> None:
        """The rules of one quality entry from ``start`` on that name a nested field (a check on a
        nested property, a DQX ``column: user_profile.age``) as rules on its top-level column: a
        field's row predicate is wrapped for each level above it (:meth:`FieldPath.predicate`); a
        row expression a contract writes (spark-sql, DQX sql_expression) reads the record as
        written. A group or query over a field, or a count of array elements, cannot be run:
        an unsupported check (:meth:`unsupported`)."""
        for entry in self.state.rules[start:]:
            rule = entry["rule"]
            paths = [self.state.nested_fields[c][0] for c in rule["columns"] if c in self.state.nested_fields]
            if not paths:
                continue
            expression = rule["kind"] == "custom_sql" or rule.get("function") == "sql_expression"
            if rule["predicate"] is not None and not expression:
                runnable = len(rule["columns"]) == 1 and (
                    rule["scope"] == "row" or (rule["scope"] == "dataset" and None not in paths[0].steps))
                if not runnable:
                    del self.state.rules[start:]
                    self.unsupported(path, column, given, common, f"a {rule['kind']} check of nested field "
                                     f"{paths[0].name!r} over {'array elements' if rule['scope'] == 'dataset' else 'rows'} "
                                     "(nested fields take row checks and metrics)", None)
                    self.nest_rules(start, path, column, given, common)
                    return
                rule["predicate"] = paths[0].predicate(rule["predicate"])
                rule.pop("passes_when", None)  # a shortcut of the stand-in column
            elif rule["scope"] not in ("text",) and not expression:
                del self.state.rules[start:]
                self.unsupported(path, column, given, common, f"a {rule['kind']} check of nested field "
                                 f"{paths[0].name!r} (nested fields take row checks and metrics)", None)
                self.nest_rules(start, path, column, given, common)
                return
            top = (self.state.nested_fields[c][0].column if c in self.state.nested_fields else c for c in rule["columns"])
            rule["columns"] = list(dict.fromkeys(top))
            rule["enforceable"] = enforceable(rule)

    def unsupported(self, path: str, column: str | None, given: tuple, common: dict, what: str, key) -> None:
        """A check the gate cannot run. A gated object refuses it unless its settings say
        ``unsupportedChecks: warn``; then, and in an object that is documentation only, it is a
        rule the Spark side reports ``not_evaluated`` (a warning: the batch is not judged on it)."""
        if self.state.settings is not None and self.state.settings.unsupported_checks != "warn":
            raise rules.RuleError(f"{what} cannot be run by the gate; set unsupportedChecks: warn in the "
                                  f"{GATE_PROPERTY} settings to list it as not evaluated instead", key)
        self.state.add_rule(path, given[0] or f"{self.state.id_prefix(column)}.unsupported", given[1], kind="unsupported",
                      scope="text", columns=[column] if column else [], reason=f"not run by the gate: {what}",
                      **{**common, "severity": "warning"})

    def compile_sql(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        # A query reads its batch ({object}) and the tables the gate settings list as references.
        references = set(self.state.settings.references) if self.state.settings else set()
        placeholders = {"object", *references, *(["property"] if column else [])}
        try:
            query = check_query(entry["query"], placeholders, _PLACEHOLDER_SYNONYMS, batch_names=self.batch_names())
        except SqlNotSpark as exc:
            self.unsupported(path, column, given, common, f"a query that is not Spark SQL the gate allows ({exc})",
                             "query")
            return
        except ValueError as exc:
            raise rules.RuleError(f"unsafe or invalid query: {exc}", "query") from exc
        self.state.add_rule(path, given[0] or f"{self.state.id_prefix(column)}.sql", given[1], kind="sql", scope="query",
                      columns=[column] if column else [],
                      query=query, threshold=rules.threshold_from(entry, percent_allowed=False), **common)

    def batch_names(self) -> list[tuple[str, ...]]:
        """The names by which a query may read the batch: the object's name and physicalName, bare
        or qualified as they are on one of the contract's servers (``orders_v1.orders`` with
        ``schema: orders_v1``; ``catalog.schema.table``; BigQuery's ``project.dataset.table``)."""
        obj = self.state.objects[self.state.index]
        own = [name for name in (obj.name, obj.physicalName) if name]
        qualifiers: set[tuple[str, ...]] = {()}
        for server in self.state.loaded.model.servers or []:
            for parts in ((server.schema_,), (server.catalog, server.schema_), (server.database, server.schema_),
                          (server.database,), (server.project, server.dataset), (server.dataset,)):
                given = tuple(part for part in parts if isinstance(part, str) and part)
                if len(given) == len(parts):
                    qualifiers.add(given)
        return [(*qualifier, name) for qualifier in sorted(qualifiers) for name in own]

    def compile_custom_sql(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        text = entry.get("implementation")
        if not isinstance(text, str):
            raise rules.RuleError("engine spark-sql needs a boolean expression as implementation", "implementation")
        predicate = rules.custom_expression(text)
        others = [c for c in rules.referenced_columns(text, list(self.state.columns)) if c != column]
        self.state.add_rule(path, given[0] or f"{self.state.id_prefix(column)}.custom_sql", given[1], kind="custom_sql",
                      scope="row", columns=[column, *others] if column else others, predicate=predicate, **common)

    def compile_metric(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        metric = entry.get("metric") or entry.get("rule")
        if metric is None:
            raise rules.RuleError("a quality entry needs a type (text, library, sql, custom) or a metric", "type")
        rule_id, id_path = given[0] or f"{self.state.id_prefix(column)}.{metric}", given[1]
        arguments = entry.get("arguments") or {}
        if metric == "rowCount":
            _only(arguments, set())
            self.state.add_rule(path, rule_id, id_path, kind="row_count", scope="dataset", columns=[],
                          threshold=rules.threshold_from(entry, percent_allowed=False), metric=metric, **common)
        elif metric == "duplicateValues":
            key = self.duplicate_key(arguments, column)
            nulls_distinct = arguments.get("nullsDistinct", True)
            if not isinstance(nulls_distinct, bool):
                raise rules.RuleError("nullsDistinct must be true or false", ["arguments", "nullsDistinct"])
            self.state.add_rule(path, rule_id, id_path, kind="unique", scope="group", columns=key,
                          nulls_distinct=nulls_distinct, threshold=rules.threshold_from(entry), metric=metric, **common)
        elif metric in _LIBRARY_ROW_METRICS:
            if column is None:
                raise rules.RuleError(f"{metric} belongs on a property, not on the schema object", "metric")
            predicate = self.metric_predicate(metric, arguments, column)
            threshold = rules.threshold_from(entry)
            if "history" in common and (metric != "nullValues" or threshold["unit"] != "percent"):
                raise rules.RuleError("a history of nullValues compares null shares: give unit: percent", "unit")
            if "history" in common and _zero_tolerance(threshold):
                raise rules.RuleError("a history of nullValues needs a threshold that allows some nulls "
                                      "(with none allowed, the history has nothing to bound)", "metric")
            if _zero_tolerance(threshold):  # every counted row breaks it: a row rule, like DQX's mustBe: 0
                self.state.add_rule(path, rule_id, id_path, kind="metric", scope="row", columns=[column], metric=metric,
                              predicate=predicate, **common)
            else:
                self.state.add_rule(path, rule_id, id_path, kind="metric", scope="dataset", columns=[column], metric=metric,
                              predicate=predicate, threshold=threshold, **common)
        else:
            self.unsupported(path, column, given, common, f"metric {metric!r} (the gate runs nullValues, missingValues, "
                             "invalidValues, duplicateValues and rowCount)", "metric")

    def duplicate_key(self, arguments: dict, column: str | None) -> list[str]:
        if column is not None:
            _only(arguments, {"nullsDistinct"})
            return [column]
        _only(arguments, {"properties", "nullsDistinct"})
        key = arguments.get("properties")
        if not isinstance(key, list) or not key:
            raise rules.RuleError("schema-level duplicateValues needs arguments.properties: a list of columns", "arguments")
        columns = {self.state.label(column): column for column in self.state.columns}  # a property by its name
        for k, name in enumerate(key):
            if name not in columns and name not in self.state.columns:
                raise rules.RuleError(f"duplicateValues refers to unknown column {name!r}", ["arguments", "properties", k])
        return [columns[name] if name in columns else name for name in key]

    def metric_predicate(self, metric: str, arguments: dict, column: str) -> str:
        """TRUE when the row is *not* counted by the metric."""
        col = quote_identifier(column)
        column_type = self.value_types()[column]
        if metric == "nullValues":
            _only(arguments, set())
            return f"{col} IS NOT NULL"
        if metric == "missingValues":
            _only(arguments, {"missingValues"})
            missing = arguments.get("missingValues", [])
            if not isinstance(missing, list):
                raise rules.RuleError("missingValues must be a list", ["arguments", "missingValues"])
            literals = [rules.literal_for(v, column_type, ["arguments", "missingValues", k])
                        for k, v in enumerate(missing) if v is not None]
            return f"({col} IS NOT NULL AND NOT {rules.in_list(column, literals)})" if literals else f"{col} IS NOT NULL"
        _only(arguments, {"validValues", "pattern"})
        if ("validValues" in arguments) == ("pattern" in arguments):
            raise rules.RuleError("invalidValues needs exactly one of arguments.validValues or arguments.pattern", "arguments")
        if "validValues" in arguments:
            valid = arguments["validValues"]
            if not isinstance(valid, list) or not valid:
                raise rules.RuleError("validValues must be a non-empty list", ["arguments", "validValues"])
            # NULL is never an invalid value (nullValues and missingValues count it): a null listed
            # as valid says so explicitly
            literals = [rules.literal_for(v, column_type, ["arguments", "validValues", k])
                        for k, v in enumerate(valid) if v is not None]
            return rules.nullable_check(column, rules.in_list(column, literals)) if literals else f"{col} IS NULL"
        if column_type != "string":
            raise rules.RuleError(f"pattern applies to string columns, not {column_type}", ["arguments", "pattern"])
        try:
            return rules.nullable_check(column, patterns.rlike(col, arguments["pattern"]))
        except patterns.PatternError as exc:
            raise rules.RuleError(str(exc), ["arguments", "pattern"]) from exc

    def compile_dqx(self, entry: dict, path: str, column: str | None, given: tuple, common: dict) -> None:
        try:
            check = dqx.parse_implementation(entry.get("implementation"))
        except rules.RuleError as exc:
            if exc.keys() != ["implementation", "check", "function"]:
                raise
            self.unsupported(path, column, given, common, f"a DQX check ({exc})", exc.key)
            return
        for one, item_key in dqx.for_each_column(check):
            try:
                fields = dqx.compile_check(one, self.value_types(), default_column=column)
            except rules.RuleError as exc:
                if item_key is not None and exc.keys()[:4] == ["implementation", "check", "arguments", "column"
                                                               if one["check"]["function"] != "is_unique" else "columns"]:
                    raise rules.RuleError(str(exc), item_key) from exc  # the column came from for_each_column
                raise
            name, name_key = fields.pop("name"), fields.pop("name_key")
            if "severity" in entry and common["severity"] != fields["severity"]:
                raise rules.RuleError(f"severity {entry['severity']!r} contradicts the DQX criticality "
                                      f"{check.get('criticality', 'error')!r}", "severity")
            rule_id, id_path = given
            if name:
                rule_id, id_path = name, yaml_path([path, *name_key])
            elif rule_id and item_key is not None:  # one id per column
                rule_id = f"{rule_id}.{'.'.join(fields['columns'])}"
            rule_id = rule_id or f"{'.'.join(map(self.state.label, fields['columns'])) or 'dataset'}.{fields['function']}"
            self.state.add_rule(path, rule_id, id_path, **{**common, **fields})


def _zero_tolerance(threshold: dict) -> bool:
    """Whether a metric threshold admits no counted row at all: 0 passes, any count above fails.
    Row counts are whole numbers, so ``mustBeLessThan: 1`` (rows) allows none; a percentage can be
    arbitrarily small, so ``mustBeLessThan: 1`` with ``unit: percent`` is a real tolerance."""
    operator, value, rows = threshold["operator"], threshold["value"], threshold["unit"] == "rows"
    if operator == "mustBe":
        return value == 0
    if operator == "mustBeLessThan":
        return rows and 0 < value <= 1
    if operator == "mustBeLessOrEqualTo":
        return 0 <= value < 1 if rows else value == 0
    if operator == "mustBeBetween":
        low, high = value
        return low <= 0 and (0 <= high < 1 if rows else high == 0)
    return False


def _only(arguments, allowed: set[str]) -> None:
    if not isinstance(arguments, dict):
        raise rules.RuleError("arguments must be a mapping", "arguments")
    unknown = sorted(set(arguments) - allowed, key=str)
    if unknown:
        raise rules.RuleError(f"unknown argument(s): {', '.join(map(str, unknown))}", ["arguments", unknown[0]])
