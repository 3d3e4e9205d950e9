"""What the configuration's rules do to one table, for the writer and for `ticdc-sink
check` / `dry-run`: its dispatchers rule, topic, target names (pingcap/ticdc's table
routing), partition dispatcher and the columns sent (`column-selectors`), and the
`[filter]` section as a `RowFilter`.

The configuration holds the rules as data (`ticdc_sink.config`); these functions build
the routing and filtering behaviour from them, so that config imports no behaviour and
the writer and the CLI, both calling here, cannot disagree.
"""

from __future__ import annotations

import attrs

from ticdc_sink.column_selector import check_selection
from ticdc_sink.config import RoutingConfig, SinkConfig
from ticdc_sink.routing import (
    DispatchRule,
    PartitionRule,
    Route,
    TopicRouter,
    build_dispatcher,
    rule_for,
    target_name,
)
from ticdc_sink.row_filter import RowFilter
from ticdc_sink.schema import TableSchema

__all__ = [
    "column_selection",
    "dispatch_rule",
    "route",
    "routed",
    "row_filter",
    "target_of",
    "topic_for",
]


def dispatch_rule(routing: RoutingConfig, database: str, table: str) -> DispatchRule:
    """The rule that decides a table's topic and partition dispatcher: the first
    `dispatchers` rule whose matcher takes the table, else the catch-all rule of the
    topic, partition, partition-columns and index options (TiCDC appends the same to
    a changefeed's rules: tiflow event_router.go, NewEventRouter)."""
    found = rule_for(routing.dispatchers, database, table)
    if found is not None:
        return found
    return DispatchRule(
        ["*.*"],
        topic=routing.topic,
        partition=routing.partition,
        columns=routing.partition_columns,
        index=routing.index,
    )


def target_of(routing: RoutingConfig, database: str, table: str) -> tuple[str, str]:
    """The (schema, table) names a table's messages carry: pingcap/ticdc's table
    routing by the rules' `target-schema` / `target-table` (`routing.target_name`);
    its topic and partition are still decided on its own names."""
    return target_name(routing.dispatchers, database, table)


def routed(routing: RoutingConfig, table: TableSchema) -> TableSchema:
    """`table` named as its messages name it (`target_of`): what the encoders see;
    `table` itself when no rule renames it."""
    names = target_of(routing, table.database, table.table)
    if names == (table.database, table.table):
        return table
    return attrs.evolve(table, database=names[0], table=names[1])


def topic_for(routing: RoutingConfig, database: str, table: str) -> str:
    """The topic of a table: its rule's topic expression, else `topic`."""
    rule = dispatch_rule(routing, database, table)
    return TopicRouter(rule.topic or routing.topic).topic_for(database, table)


def route(routing: RoutingConfig, table: TableSchema) -> Route:
    """Where the table's rows go: its topic and partition dispatcher, both from
    `dispatch_rule`. The writer and `ticdc-sink check` / `dry-run` route with this, so
    they cannot disagree.

    Raises:
        ConfigError: partition columns or an index the table does not have.
    """
    rule = dispatch_rule(routing, table.database, table.table)
    dispatcher = build_dispatcher(rule.partition, table, columns=rule.columns, index=rule.index)
    topic = TopicRouter(rule.topic or routing.topic).topic_for(table.database, table.table)
    return Route(topic, dispatcher)


def column_selection(config: SinkConfig, table: TableSchema) -> tuple[int, ...] | None:
    """The positions of `table`'s columns sent under `column-selectors` (None: all),
    checked against the table's keys and its `columns` partition dispatcher.

    Raises:
        ConfigError: the selection breaks one of the rules of
            `column_selector.check_selection`.
    """
    if not config.column_selectors:
        return None
    rule = dispatch_rule(config.routing, table.database, table.table)
    hashed = rule.columns if rule.partition is PartitionRule.COLUMNS else ()
    return check_selection(config.column_selectors, table, hashed)


def row_filter(config: SinkConfig) -> RowFilter:
    """The `[filter]` section as the writer applies it (with `case-sensitive`)."""
    return RowFilter(config.filter_rules, config.event_filters, config.routing.case_sensitive)
