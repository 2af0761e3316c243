"""Alembic migrations, shipped as package data so an installed Sourced can migrate without alembic.ini."""
