"""The Cluck reference project and farm domain."""
