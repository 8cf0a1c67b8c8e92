"""Adapters that let other array libraries call the array layer, adding no rules of their own."""
