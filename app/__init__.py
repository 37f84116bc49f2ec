"""SessionScope: the desktop application and command line over the persistence engine."""
