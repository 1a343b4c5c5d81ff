"""Live prices: price sources, a local price store with history (docs/prices.md)."""
