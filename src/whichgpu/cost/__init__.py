"""Money: cost per TFLOP, billing, cost per task, ownership and break-even, currencies."""
