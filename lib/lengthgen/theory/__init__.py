"""Checks of theorems by computation: quantities from the papers' proofs, measured."""
