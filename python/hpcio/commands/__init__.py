"""One module per hpcio subcommand: HELP, add_arguments(parser), main(args, argv)."""
