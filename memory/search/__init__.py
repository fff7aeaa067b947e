"""The search engine: seed retrieval, RRF, typed graph expansion, scoring, projection, context."""
