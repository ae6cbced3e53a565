"""Contracts that change: what a new version changes, and whether it breaks producers or consumers."""
