# The bible bench's shared steps, sourced by the study scripts (phrase_feature_study.sh,
# table1_study.sh, sentence_study.sh): `step`, which makes each step resumable and timed,
# `resumable`, which continues an interrupted training, `cut_table`, which builds a row's table
# from a scored one, and `bench_system`,
# which builds the bench's system in WORK/sys from DATA: dev is every other verse of the 842
# (the issue asked for at least 400), test all 802, the tables filtered once to the dev and
# test sources by Moses' own script, the tuned ini. Needs $data, $work and $MOSES_HOME; sets $sys.

# step NAME OUTPUT COMMAND...: run COMMAND unless OUTPUT exists, and record how long it took.
step() {
    local name="$1" output="$2"; shift 2
    if [[ -e "$output" ]]; then echo "== $name: done earlier ($output)" >&2; return; fi
    echo "== $name" >&2
    local start=$SECONDS
    "$@"
    printf '%s\t%d\n' "$name" $((SECONDS - start)) >> "$work/times.tsv"
}

# resumable MODEL ARGS...: `rescore train ARGS -o MODEL`, continuing MODEL.checkpoint if an
# interrupted (or finished, to train on) run left one.
resumable() {
    local model="$1"; shift
    if [[ -e "$model.checkpoint" ]]; then rescore train "$@" -o "$model" --resume; else rescore train "$@" -o "$model"; fi
}

# bench_system: WORK/sys (corpus/, model/, lm/) from DATA, each part skipped once it exists.
bench_system() {
    sys="$work/sys"
    mkdir -p "$sys/corpus" "$sys/model"
    for name in dev.en dev.fr dev.ref-darby.fr; do
        step "dev $name" "$sys/corpus/$name.gz" \
            sh -c "zcat '$data/corpus/$name.gz' | awk 'NR%2==1' | gzip > '$sys/corpus/$name.gz.tmp' && mv '$sys/corpus/$name.gz.tmp' '$sys/corpus/$name.gz'"
    done
    step "filter" "$work/filtered" filter_tables
    step "system" "$sys/model/phrase-table.gz" install_system
}

filter_tables() {
    zcat "$sys/corpus/dev.en.gz" "$data/corpus/test.en.gz" > "$work/devtest.en"
    rm -rf "$work/filtered.tmp"
    (cd "$data" && "$MOSES_HOME/scripts/training/filter-model-given-input.pl" \
        "$work/filtered.tmp" model/moses.ini "$work/devtest.en")
    mv "$work/filtered.tmp" "$work/filtered"
}

install_system() {
    gzip -c "$work"/filtered/reordering-table.* > "$sys/model/reordering-table.wbe-msd-bidirectional-fe.gz"
    cp "$data/tuning/moses.ini" "$sys/model/moses.ini"  # the tuned weights; paths model/..., lm/...
    ln -sfn "$data/lm" "$sys/lm"
    cp "$work"/filtered/phrase-table.*.gz "$sys/model/phrase-table.gz"
}

# cut_table SCORED TABLE FIELD...: TABLE (unless it exists) is SCORED with only the filtered
# table's 4 scores, then SCORED's score fields FIELD... in that order (1-based).
cut_table() {
    local scored="$1" table="$2"; shift 2
    [[ -s $table ]] && return
    zcat "$scored" | awk -F ' [|][|][|] ' -v OFS=' ||| ' -v pick="$*" \
        '{ split($3, s, " "); k = split(pick, p, " "); out = s[1] " " s[2] " " s[3] " " s[4]
           for (i = 1; i <= k; i++) out = out " " s[p[i]]
           $3 = out; print }' | gzip > "$table.tmp"
    mv "$table.tmp" "$table"
}
