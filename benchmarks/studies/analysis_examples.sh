#!/usr/bin/env bash
# docs/analysis.md's examples (the paper's section 4) made again from one model, so that the page's
# tables come from committed files (benchmarks/studies/analysis_tables.py) and its figures are
# these commands' output:
#
#   benchmarks/studies/analysis_examples.sh DATA MODEL OUT [ATTENTION_MODEL]
#
# DATA is ../shared/data/bible-en-fr; MODEL the main job's model (`rescore train
# DATA/model/phrase-table.gz -o MODEL`, the one Table 1 used); ATTENTION_MODEL an rnnsearch,
# luong or transformer model for the attention map (arch_guide.py's rnnsearch-gru.pt).
# OUT gets the tables (Markdown, as the commands print them), the commands' messages
# (analysis.log, paths named DATA, MODELS and OUT) and the figures (PNG, reduced to 64 colours
# when Pillow is there), which the page shows from there.
set -euo pipefail

DATA=$(realpath "$1") MODEL=$(realpath "$2") OUT=$(realpath -m "$3")
ATTENTION_MODEL=${4:+$(realpath "$4")}
TABLE=$DATA/model/phrase-table.gz
RESCORE=${RESCORE:-rescore}
mkdir -p "$OUT"
LOG=$OUT/analysis.log
: > "$LOG"

named() {  # the log names the folders, not this machine's paths
    sed -e "s|$OUT|OUT|g" -e "s|$DATA|DATA|g" -e "s|$(dirname "$MODEL")/|MODELS/|g" \
        ${ATTENTION_MODEL:+-e "s|$(dirname "$ATTENTION_MODEL")/|MODELS/|g"}
}

shown() {  # the arguments as a shell takes them: those with spaces or quotes in double quotes
    local arg
    for arg; do
        [[ $arg =~ [[:space:]\'] ]] && arg="\"$arg\""
        printf ' %s' "$arg"
    done
}

run() {  # one command (every output goes to a file), its settings line and messages kept in the log
    echo "\$ rescore$(shown "$@")" | named >> "$LOG"
    $RESCORE "$@" 2>&1 | named >> "$LOG"
}

# Table 2: the table's top targets beside the RNN's, for long frequent and long rare sources,
# and for the most frequent single words.
run top-targets "$TABLE" --model "$MODEL" --min-source-words 4 --num-sources 5 -o "$OUT/table2-frequent.md" --force
run top-targets "$TABLE" --model "$MODEL" --min-source-words 4 --num-sources 5 --pick rare -o "$OUT/table2-rare.md" --force
run top-targets "$TABLE" --model "$MODEL" --num-sources 6 -k 5 -o "$OUT/table2-words.md" --force

# Table 3: targets the RNN proposes itself, by beam search and by sampling.
printf '%s\n' "the children of israel" "the word of yahweh" "thus says the lord" \
    "father of the young lady" > "$OUT/table3-sources.txt"
run generate "$MODEL" --sources "$OUT/table3-sources.txt" --beam 5 --samples 50 --table "$TABLE" \
    -o "$OUT/table3.md" --force

# Figure 3: the RNN's scores against the table's, on every 100th line.
zcat "$TABLE" | awk 'NR % 100 == 1' | gzip > "$OUT/sample.gz"
run score "$OUT/sample.gz" --model "$MODEL" -o "$OUT/sample.rnn.gz" --force
run moses plot-scores "$OUT/sample.rnn.gz" -o "$OUT/fig3-scores.png" --force
rm "$OUT/sample.gz" "$OUT/sample.rnn.gz"

# Figures 4 and 5: word embeddings and phrase representations.
run plot-embeddings "$MODEL" -o "$OUT/fig4-embeddings.png" --side source --words 500 --force
run plot-phrases "$MODEL" "$TABLE" -o "$OUT/fig5-phrases.png" --phrases 1000 --min-words 4 --force

if [[ -n $ATTENTION_MODEL ]]; then
    run plot-attention "$ATTENTION_MODEL" --source "the holy city" --target "la ville sainte" \
        --source "the word of yahweh" --target "la parole de l' éternel" \
        --source "and god said to moses" --target "et dieu dit à moïse" -o "$OUT/attention.png" --force
fi

python3 - "$OUT" <<'EOF' || echo "Pillow missing: figures kept at full colour" >&2
import sys
from pathlib import Path
from PIL import Image
for png in Path(sys.argv[1]).glob("*.png"):
    Image.open(png).convert("RGB").quantize(64).save(png, optimize=True)
EOF
