"""Advice: the cheapest configuration that can run the job, ranked and explained; the checklist."""
