"""import_exits: modules that end the interpreter (or raise) while they are imported, for the front end's import probe."""
