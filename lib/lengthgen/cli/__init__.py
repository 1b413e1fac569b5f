"""Command-line groups; each module has add_parser(subparsers) and sets args.func."""
