"""A connection's resources: listing, reading, templates and subscriptions."""
