"""Sub-commands of ``gate_job.py``.

Every module in this package that defines ``register(subparsers)`` is one sub-command: it
adds its parser and sets ``func``, called with the parsed arguments and returning the exit
code. ``gate_job.py`` discovers them at start-up, so a new step (stage, publish, quarantine,
record) is added by dropping a module here, without touching the entry point. ``args.context``
is a dict shared by the steps of one chain (``stage+validate``): a step leaves its result
there under its own name for the steps after it.
"""
