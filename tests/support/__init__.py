"""Test doubles and real-server helpers shared by the test packages (never test modules)."""
