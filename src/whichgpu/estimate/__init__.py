"""Estimates: memory (what fits), speed (how fast), multi-GPU scaling, calibration constants."""
