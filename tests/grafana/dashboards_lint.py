#!/usr/bin/env python3
"""Lint of the shipped Grafana dashboards and provisioning (deploy/grafana), stdlib only.

Every dashboard is valid JSON (no duplicate keys) with schemaVersion >= 39 and a unique
uid; panels use modern types only (no graph, singlestat, table-old); every panel and
every target names its data source through the $datasource variable; every target has a
non-empty expr; variables are defined before use and used only as a regex matcher's value
(label=~"$var"), whose "All" is .*; every metric an expression reads is a family of
docs/metrics.md or a recording rule of deploy/prometheus/rules/eacgm.rules.yml; rate()
and increase() read counters or histogram series only; the provisioning files point at
the dashboards and keep credentials out. Their run on real servers is the integration
test Dashboards.* (tests/integration/dashboards_test.cpp).

A dashboard of the history store (its panels name the PostgreSQL data source
eacgm-history, which the provisioning must define) is checked for SQL instead: every
panel, target and variable names that data source by its uid; every target is raw SQL
in the table or time_series format (time series select `time`, `metric` and `value`);
only the macros grafana_history_sql substitutes are used; every variable is a multi-value
query variable whose "All" is the literal '__all', used only as `IN ($var)` beside an
`'__all' IN ($var)` that lets "All" through, or a textbox (a price, a currency) with a
default, used only as `${var:sqlstring}` (Grafana quotes it as an SQL string). Its run
is grafana_history_sql (tests/grafana/history_sql_test.cpp).

Usage: dashboards_lint.py SOURCE_DIR
"""
import json
import os
import re
import sys

ALLOWED = {"timeseries", "stat", "gauge", "table", "state-timeline", "bargauge", "heatmap", "row"}
DEPRECATED = {"graph", "singlestat", "table-old", "grafana-singlestat-panel", "grafana-piechart-panel",
              "grafana-worldmap-panel"}
BUILT_IN = {"__rate_interval", "__interval", "__range"}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
HISTORY = {"type": "postgres", "uid": "eacgm-history"}
# The macros tests/grafana/history_sql_test.cpp substitutes as Grafana does.
SQL_MACROS = {"__timeFrom", "__timeTo", "__timeFilter", "__interval_ms"}


class Lint:
    def __init__(self):
        self.errors = []

    def error(self, where, what):
        self.errors.append(f"{where}: {what}")


def lint_panel(lint, name, p, ids, datasource):
    """The checks every panel of every dashboard gets: a modern type, a unique id, a
    grid position, and (rows aside) a title, the dashboard's data source and targets
    with unique refIds. Returns (where, targets), or (None, None) for a row."""
    where = f"{name} panel {p.get('id')} {p.get('title')!r}"
    ptype = p.get("type")
    if ptype in DEPRECATED:
        lint.error(where, f"deprecated panel type {ptype}")
    elif ptype not in ALLOWED:
        lint.error(where, f"panel type {ptype} not in {sorted(ALLOWED)}")
    if p.get("id") in ids:
        lint.error(where, "duplicate panel id")
    ids.add(p.get("id"))
    g = p.get("gridPos", {})
    if not all(isinstance(g.get(k), int) for k in ("h", "w", "x", "y")) or g["x"] + g["w"] > 24:
        lint.error(where, f"gridPos {g}")
    if ptype == "row":
        return None, None
    if not p.get("title"):
        lint.error(where, "no title")
    if p.get("datasource") != datasource:
        lint.error(where, f"datasource {p.get('datasource')} (want {datasource})")
    targets = p.get("targets", [])
    if not targets:
        lint.error(where, "no targets")
    refs = [t.get("refId") for t in targets]
    if len(set(refs)) != len(refs):
        lint.error(where, f"duplicate refIds {refs}")
    return where, targets


def no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError(f"duplicate keys {sorted(dup)}")
    return dict(pairs)


def metric_families(source):
    """name -> type from docs/metrics.md's tables."""
    families = {}
    with open(os.path.join(source, "docs", "metrics.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| `([A-Za-z_:][A-Za-z0-9_:]*)` \| (\w+) \|", line)
            if m:
                families[m.group(1)] = m.group(2)
    return families


def recorded_names(source):
    path = os.path.join(source, "deploy", "prometheus", "rules", "eacgm.rules.yml")
    with open(path, encoding="utf-8") as f:
        return set(re.findall(r"^\s*- record:\s*(\S+)\s*$", f.read(), re.M))


def base_family(name, families):
    """The documented family a series name belongs to, with its type; None when unknown."""
    if name in families:
        return name, families[name]
    for suffix in ("_bucket", "_count", "_sum"):
        if name.endswith(suffix) and families.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)], "histogram"
    return None


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def variable_uses(expr):
    """(name, inside a =~ matcher's value) for every $var / ${var} / ${var:fmt}."""
    uses = []
    for m in re.finditer(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))", expr):
        name = m.group(1) or m.group(2)
        before = expr[: m.start()]
        in_regex = re.search(r'=~\s*"[^"]*$', before) is not None
        uses.append((name, in_regex))
    return uses


def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))


def lint_expr(lint, where, expr, variables, families, recorded):
    if not expr.strip():
        lint.error(where, "empty expr")
        return
    for name, in_regex in variable_uses(expr):
        if name in BUILT_IN:
            continue
        if name not in variables:
            lint.error(where, f"undefined variable ${name}")
        elif not in_regex:
            lint.error(where, f'${name} outside a regex matcher (label=~"${name}"): "All" would not match')
    bare = strip_strings(expr)
    bare = re.sub(r"\[[^\]]*\]", "", bare)  # range and subquery durations
    bare = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", bare)
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", bare):
        token = m.group(0)
        if not (token.startswith("eacgm_") or token.startswith("DCGM_FI_") or ":" in token):
            continue
        if ":" in token:
            if token not in recorded:
                lint.error(where, f"{token} is no recording rule of eacgm.rules.yml")
        elif base_family(token, families) is None:
            lint.error(where, f"{token} is not in docs/metrics.md")
    for m in re.finditer(r"\b(rate|irate|increase)\(\s*([A-Za-z_:][A-Za-z0-9_:]*)", bare):
        fam = base_family(m.group(2), families)
        if fam and fam[1] == "gauge":
            lint.error(where, f"{m.group(1)}() of the gauge {m.group(2)}")


def is_history(doc):
    return any(p.get("datasource", {}).get("uid") == HISTORY["uid"] for p in walk(doc.get("panels", [])))


def lint_sql(lint, where, sql, variables, texts=frozenset()):
    if not sql.strip():
        lint.error(where, "empty rawSql")
        return
    for m in re.finditer(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))", sql):
        name = m.group(1) or m.group(2)
        if name.startswith("__"):
            if name not in SQL_MACROS:
                lint.error(where, f"macro ${name} (grafana_history_sql substitutes only {sorted(SQL_MACROS)})")
            continue
        if name not in variables:
            lint.error(where, f"undefined variable ${name}")
            continue
        if name in texts:
            # Typed by the viewer: only as a quoted string, never as SQL.
            if m.group(0) != f"${{{name}:sqlstring}}":
                lint.error(where, f"{m.group(0)}: a textbox only as ${{{name}:sqlstring}}")
            continue
        if not re.match(r"\s*\)", sql[m.end():]) or not re.search(r"\bIN\s*\($", sql[: m.start()]):
            lint.error(where, f"${name} outside IN (${name})")
        if f"'__all' IN (${name})" not in sql:
            lint.error(where, f"${name} without '__all' IN (${name}): \"All\" would match nothing")


def lint_history_dashboard(lint, name, doc):
    """Panels and variables of a dashboard over the history store (SQL)."""
    templating = doc.get("templating", {}).get("list", [])
    variables = {v.get("name") for v in templating}
    texts = frozenset(v.get("name") for v in templating if v.get("type") == "textbox")
    for v in templating:
        where = f"{name} ${v.get('name')}"
        if v.get("type") == "textbox":
            if not isinstance(v.get("query"), str) or v.get("current", {}).get("value") != v.get("query"):
                lint.error(where, "a textbox without its default (query) as its current value")
            continue
        if v.get("type") != "query":
            lint.error(where, f"variable type {v.get('type')} (want query or textbox)")
            continue
        if v.get("datasource") != HISTORY:
            lint.error(where, f"datasource {v.get('datasource')} (want {HISTORY})")
        if not (v.get("multi") and v.get("includeAll") and v.get("allValue") == "'__all'"):
            lint.error(where, "not multi-value with includeAll and allValue '__all'")
        query = v["query"].get("rawSql", "") if isinstance(v.get("query"), dict) else v.get("query", "")
        lint_sql(lint, where, query or "", variables, texts)
    ids = set()
    panels = list(walk(doc.get("panels", [])))
    for p in panels:
        where, targets = lint_panel(lint, name, p, ids, HISTORY)
        if where is None:
            continue
        ptype = p.get("type")
        for t in targets:
            twhere = f"{where} target {t.get('refId')}"
            if t.get("datasource") != HISTORY:
                lint.error(twhere, f"datasource {t.get('datasource')} (want {HISTORY})")
            if t.get("rawQuery") is not True or t.get("editorMode") != "code":
                lint.error(twhere, "not raw SQL (rawQuery true, editorMode code)")
            fmt = t.get("format")
            if fmt not in ("table", "time_series"):
                lint.error(twhere, f"format {fmt} (table or time_series)")
            sql = t.get("rawSql", "")
            if fmt == "time_series" and not all(re.search(rf"\b{c}\b", sql) for c in ("time", "metric", "value")):
                lint.error(twhere, "a time series without time, metric and value columns")
            if ptype == "state-timeline" and fmt != "time_series":
                lint.error(twhere, "a state timeline needs the time_series format")
            lint_sql(lint, twhere, sql, variables, texts)
    if not panels:
        lint.error(name, "no panels")
    return len(panels), sum(len(p.get("targets", [])) for p in panels)


def lint_dashboard(lint, path, doc, families, recorded):
    name = os.path.basename(path)
    if is_history(doc):
        if not isinstance(doc.get("schemaVersion"), int) or doc["schemaVersion"] < 39:
            lint.error(name, f"schemaVersion {doc.get('schemaVersion')} (at least 39)")
        for key in ("uid", "title"):
            if not doc.get(key):
                lint.error(name, f"no {key}")
        return lint_history_dashboard(lint, name, doc)
    if not isinstance(doc.get("schemaVersion"), int) or doc["schemaVersion"] < 39:
        lint.error(name, f"schemaVersion {doc.get('schemaVersion')} (at least 39)")
    for key in ("uid", "title"):
        if not doc.get(key):
            lint.error(name, f"no {key}")
    templating = doc.get("templating", {}).get("list", [])
    variables = {v.get("name") for v in templating}
    ds = [v for v in templating if v.get("name") == "datasource"]
    if not ds or ds[0].get("type") != "datasource" or ds[0].get("query") != "prometheus":
        lint.error(name, "no $datasource variable of type datasource (prometheus)")
    for v in templating:
        if v.get("type") != "query":
            continue
        where = f"{name} ${v.get('name')}"
        if v.get("datasource") != DATASOURCE:
            lint.error(where, f"datasource {v.get('datasource')} (want {DATASOURCE})")
        query = v["query"].get("query", "") if isinstance(v.get("query"), dict) else v.get("query", "")
        if not re.match(r"^label_values\(.*\)$", query or ""):
            lint.error(where, f"query {query!r} is not label_values(...)")
        if v.get("includeAll") and v.get("allValue") != ".*":
            lint.error(where, "includeAll without allValue .*")
        lint_expr(lint, where, re.sub(r"^label_values\((.*),\s*\w+\)$", r"\1", query or ""),
                  variables, families, recorded)
    ids = set()
    panels = list(walk(doc.get("panels", [])))
    if not panels:
        lint.error(name, "no panels")
    for p in panels:
        where, targets = lint_panel(lint, name, p, ids, DATASOURCE)
        if where is None:
            continue
        for t in targets:
            twhere = f"{where} target {t.get('refId')}"
            if t.get("datasource") != DATASOURCE:
                lint.error(twhere, f"datasource {t.get('datasource')} (want {DATASOURCE})")
            lint_expr(lint, twhere, t.get("expr", ""), variables, families, recorded)
    return len(panels), sum(len(p.get("targets", [])) for p in panels)


def lint_provisioning(lint, source):
    base = os.path.join(source, "deploy", "grafana", "provisioning")
    ds_path = os.path.join(base, "datasources", "eacgm.yaml")
    db_path = os.path.join(base, "dashboards", "eacgm.yaml")
    for path in (ds_path, db_path):
        if not os.path.exists(path):
            lint.error(path, "missing")
            return
    with open(ds_path, encoding="utf-8") as f:
        ds = f.read()
    if not re.search(r"^apiVersion: 1$", ds, re.M):
        lint.error(ds_path, "no apiVersion: 1")
    for want in (r"type: prometheus", r"type: postgres", r"url: \$\{EACGM_PROMETHEUS_URL\}",
                 r"password: \$\{EACGM_PG_PASSWORD\}", r"user: \$\{EACGM_PG_USER\}",
                 r"uid: eacgm-history\n\s*type: postgres\n", r"password: \$\{EACGM_HISTORY_PG_PASSWORD\}"):
        if not re.search(want, ds):
            lint.error(ds_path, f"no {want}")
    # Credentials only through the environment.
    for m in re.finditer(r"^\s*(password|user|url|database|sslmode):\s*(\S.*)$", ds, re.M):
        if not m.group(2).startswith("${EACGM_"):
            lint.error(ds_path, f"{m.group(1)} is {m.group(2)!r}, not an ${{EACGM_...}} variable")
    with open(db_path, encoding="utf-8") as f:
        db = f.read()
    if not re.search(r"^\s*path: /var/lib/grafana/dashboards/eacgm$", db, re.M):
        lint.error(db_path, "the provider's path is not /var/lib/grafana/dashboards/eacgm (README.md)")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source = sys.argv[1]
    lint = Lint()
    families = metric_families(source)
    recorded = recorded_names(source)
    if len(families) < 50 or not recorded:
        lint.error(source, f"read {len(families)} families and {len(recorded)} recording rules: parsing broke")
    folder = os.path.join(source, "deploy", "grafana", "dashboards")
    uids, titles = {}, {}
    panels = targets = boards = 0
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".json"):
            continue
        boards += 1
        path = os.path.join(folder, entry)
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f, object_pairs_hook=no_duplicate_keys)
        except ValueError as e:
            lint.error(entry, f"not valid JSON: {e}")
            continue
        for key, seen in (("uid", uids), ("title", titles)):
            if doc.get(key) in seen:
                lint.error(entry, f"{key} {doc.get(key)!r} is also {seen[doc.get(key)]}'s")
            seen[doc.get(key)] = entry
        n, t = lint_dashboard(lint, path, doc, families, recorded)
        panels += n
        targets += t
    if boards == 0:
        lint.error(folder, "no dashboards")
    lint_provisioning(lint, source)
    for e in lint.errors:
        print(e)
    print(f"{boards} dashboards, {panels} panels, {targets} targets: "
          f"{len(lint.errors)} problem(s)")
    return 1 if lint.errors else 0


if __name__ == "__main__":
    sys.exit(main())
