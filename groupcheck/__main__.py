"""``python -m groupcheck``: the command line (`cli.main`)."""

from .cli import main

raise SystemExit(main())
