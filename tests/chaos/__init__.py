"""The fault matrix (`make chaos`): sqlqueue's real jobs under the faults production sees, checked by a
verifier that shares no code with sqlqueue (tests/chaos/verify.py). See README "Reliability"."""
