"""Measuring a real local GPU and calibrating the estimates against it."""
