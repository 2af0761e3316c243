"""One module per `sourced` subcommand, each exposing `register(subparsers)`."""
