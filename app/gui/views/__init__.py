"""Widgets that only lay out the models and forward what the user asks for."""
