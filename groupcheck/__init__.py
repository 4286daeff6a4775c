"""groupcheck: a formal-model-driven test harness for Kafka's classic consumer-group protocol."""

__version__ = "0.1.0"


def _source_checkout_floors() -> None:
    """Run from a source checkout without installing: the floors (impl/, model/, ...) sit
    beside this folder, and an install maps them into this namespace (pyproject.toml)."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    installed = os.path.isdir(os.path.join(here, "impl"))
    if not installed and os.path.isfile(os.path.join(root, "impl", "consumer_protocol.py")):
        __path__.append(root)


_source_checkout_floors()
