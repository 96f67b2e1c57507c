# shellcheck shell=bash
# Sourced by the proxy's study scripts: the summary line that `rescore train` prints at the end
# (its log on stderr) as tab-separated figures, after LABEL (which may hold \t itself):
# updates, best held-out perplexity, the update it was reached at, honest held-out perplexity,
# seconds (of this run: a resumed one's summary says "N updates (M in this run)", N the total).
#
#   training_row LABEL LOG
#
# sentence_model_row does the same for a sentence model's summary (`rescore train --parallel`, which
# validates on a set of sentences and has no honest figure): updates, best dev perplexity, the
# update it was reached at, seconds.
#
#   sentence_model_row LABEL LOG

training_row() {
    sed -n "s/^trained on .*: \([0-9]*\) updates[^,]*, .*valid perplexity \([0-9.]*\) (update \([0-9]*\); honest \([0-9.]*\) .*; \([0-9.]*\) s; model .*/$1\t\1\t\2\t\3\t\4\t\5/p" "$2"
}

sentence_model_row() {
    sed -n "s/^trained on .*: \([0-9]*\) updates, .*valid perplexity \([0-9.]*\) (update \([0-9]*\)).*; \([0-9.]*\) s; model .*/$1\t\1\t\2\t\3\t\4/p" "$2"
}
