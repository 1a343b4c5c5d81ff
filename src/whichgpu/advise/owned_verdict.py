"""The first line of an answer given the user's own card: whether that card runs the job and
costs less than the best rental (then it heads the answer), or why a rental beats it.

A person who says "I have an RTX 4090" asks first whether it will do; an answer that heads
with a rental and leaves the owned card to a footnote reads as "rent" even where owning
costs less. The comparison uses the ranking's own key (advise/ranking.py), so the owned card
and the rentals are weighed the same way: per hour with no amount of work, per job with one,
by time when time is the objective.
"""

from __future__ import annotations

from whichgpu.advise.explain import what
from whichgpu.advise.options import OwnedOption, Recommendation
from whichgpu.advise.ranking import _rank_key
from whichgpu.messages import Message, msg
from whichgpu.vocabulary import Objective, Placement


def best_owned(rec: Recommendation) -> OwnedOption | None:
    """The owned count that runs the job best by the ranking's key (one with a speed), else
    the first that fits, else None."""
    timed = [o for o in rec.owned if o.fits and o.option is not None]
    if timed:
        return min(timed, key=lambda o: _rank_key(rec.job, o.option))  # type: ignore[arg-type]
    return next((o for o in rec.owned if o.fits), None)


def owned_verdict(rec: Recommendation) -> Message | None:
    """Set ``rec.owned_head`` when the user's card should head the answer, and return the
    sentence that says so, or why a rental beats it (None without an owned card)."""
    if not rec.owned:
        return None
    own = best_owned(rec)
    best = rec.best
    if own is None:
        last = rec.owned[-1]
        where = Placement(last.gpu.id, last.count)
        if best is None:
            return msg("owned.verdict.no_fit", "Your own card ({where}) does not run it as "
                       "asked: {reason}.", where=where, reason=last.reason)
        return msg("owned.verdict.no_fit_rent", "Your own card ({where}) does not run it as "
                   "asked ({reason}); the rentals below do.", where=where, reason=last.reason)
    where = Placement(own.gpu.id, own.count)
    if best is None:
        rec.owned_head = own
        return msg("owned.verdict.only", "Your own card ({where}) runs it, and no rental in "
                   "this price list does.", where=where)
    if own.option is None:
        rec.owned_head = own  # it fits and is already paid for; its speed cannot be said
        return msg("owned.verdict.no_speed", "Your own card ({where}) runs it (it fits). "
                   "Whether it costs less than the best rental ({best}: {rent}) cannot be "
                   "said without its speed figures (see your card, below).", where=where,
                   best=best.label, rent=what(best))
    if own.cost_per_hour is None:
        rec.owned_head = own  # it fits and is already paid for; its cost cannot be weighed
        return msg("owned.verdict.unpriced", "Your own card ({where}) runs it. Whether it "
                   "costs less than the best rental ({best}: {rent}) cannot be said without "
                   "what owning it costs (see your card, below).", where=where,
                   best=best.label, rent=what(best))
    said = dict(where=where, own=what(own.option), rent=what(best), best=best.label)
    by_time = rec.job.objective == Objective.TIME
    if _rank_key(rec.job, own.option) <= _rank_key(rec.job, best):
        rec.owned_head = own
        if by_time:
            return msg("owned.verdict.heads_time", "Your own card ({where}) runs it sooner "
                       "than any rental: {own}, against {rent} for the fastest rental "
                       "({best}). The rentals are ranked below for comparison.", **said)
        return msg("owned.verdict.heads", "Your own card ({where}) runs it for less than any "
                   "rental: {own} counting what owning it costs, against {rent} for the "
                   "cheapest rental ({best}). The rentals are ranked below for comparison.",
                   **said)
    if by_time:
        return msg("owned.verdict.beaten_time", "Your own card ({where}) runs it, but renting "
                   "{best} finishes sooner: {rent}, against {own} on your card.", **said)
    return msg("owned.verdict.beaten", "Your own card ({where}) runs it, but renting {best} "
               "costs less: {rent}, against {own} on your card counting what owning it costs "
               "(its purchase spread over its life, and its power).", **said)
