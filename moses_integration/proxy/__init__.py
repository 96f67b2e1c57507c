"""The proxy bench: BLEU of a feature judged on stored Moses n-best lists, without the decoder.

A new phrase-table column or sentence feature is summed over each stored hypothesis's phrase
pairs (or scored on the whole hypothesis), the log-linear weights are retuned on the dev lists
by MERT in numpy, and the test lists are reranked and scored as `moses ablation` scores a
decoded system. What it cannot see: the new hypotheses a feature would let the decoder find.
"""
