"""consumerProgress over time, everything below the CLI: ``rules`` (statuses, rates, time to
drain: pure functions over samples, also run by lagReport's Spark job), ``codec`` (a sample as
a JSON document, both ways), ``history`` (the --history file), ``why`` (the message a stuck
queue waits on) and ``sampler`` (samples taken on one kept backend, handed to a sink: the
--watch table, the --history line, the exporter).

Import the modules themselves (``from mqctl.ops.watch import rules``): this package loads none
of them on its own.
"""
