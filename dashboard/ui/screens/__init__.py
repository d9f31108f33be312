"""Screens pushed over the main screen: help and row details."""
