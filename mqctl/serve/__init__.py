"""Long-running processes beside the CLI: ``mqctl exporter``'s Prometheus endpoint (``metrics``,
``http``) and its Alertmanager sender (``alerts``), each a sink of ops/watch's fleet sampler.

serve may import ops, model, errors and config, never cli; nothing below it imports serve
(import-linter). prometheus-client and httpx are imported only here, and only when the exporter
runs: ``mqctl --help`` loads neither.
"""
