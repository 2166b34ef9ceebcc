"""One module per hpcio subcommand: add_arguments(parser), main(args, argv); its help line is
in parser.HELP."""
