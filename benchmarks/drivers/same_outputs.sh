#!/usr/bin/env bash
# Every file the commands write, for a before/after comparison of a change that must not alter
# outputs: tables in every score format, scoring in units, top-targets, generate, translate,
# n-best rescoring, moses.ini edits, and the one-line errors of bad input (exit code and line).
#
#   benchmarks/drivers/same_outputs.sh OUT_DIR [SHARED_DATA]
#   RESCORE="python -m rescorer" PYTHONPATH=/path/to/old/checkout benchmarks/drivers/same_outputs.sh OLD_DIR
#   diff -r OLD_DIR NEW_DIR
#
# Gzipped outputs are kept decompressed (gzip headers carry no content). stderr is kept only as
# the exit code and last line of the commands that must fail: the settings signature and the
# timings of the others are not outputs.
set -uo pipefail
out=$(realpath -m "$1")
data=$(realpath "${2:-$(dirname "$0")/../../../shared/data/bible-en-fr}")
example=$(realpath "$(dirname "$0")/../../examples/phrase-table.gz")
read -r -a rescore <<<"${RESCORE:-rescore}"
mkdir -p "$out" && cd "$out" || exit 1
rm -rf ./* && mkdir work

run() {  # run NAME ARGS...: a command that must succeed
    local name=$1; shift
    if ! "${rescore[@]}" -q "$@" >"work/$name.stdout" 2>"work/$name.stderr"; then
        echo "FAILED: $name: $(tail -1 "work/$name.stderr")" >&2
    fi
}

fails() {  # fails NAME ARGS...: a command that must fail; keeps its exit code and last line
    local name=$1; shift
    "${rescore[@]}" -q "$@" >/dev/null 2>"work/$name.stderr"
    echo "$? $(tail -1 "work/$name.stderr" | sed "s#$out/##g")" >"$name.error"
}

keep() {  # keep FILE NAME: a file the commands wrote, decompressed
    if [[ $1 == *.gz ]]; then zcat "$1" >"$2"; else cp "$1" "$2"; fi
}

zcat "$data/corpus/dev.en.gz" | head -300 >work/train.en
zcat "$data/corpus/dev.fr.gz" | head -300 >work/train.fr
zcat "$data/corpus/dev.en.gz" | head -5 >work/nbest.en
zcat "$data/tuning/run11.best100.out.gz" | awk -F' [|][|][|] ' '$1 < 5' >work/nbest.txt
printf 'a ||| b\n' | gzip >work/bad-table.gz

run train-fwd train "$example" -o work/fwd.pt --preset tiny --max-updates 30 --seed 1 --batch-tokens 500
run train-inv train "$example" -o work/inv.pt --preset tiny --max-updates 20 --seed 2 --direction inverse
run train-sent train --parallel work/train.en work/train.fr -o work/sent.pt --preset tiny --max-updates 20

run score-prob score "$example" --model work/fwd.pt -o work/prob.gz
run score-log score "$example" --model work/fwd.pt -o work/log.gz --score-format log
run score-wp score "$example" --model work/fwd.pt -o work/wp.gz --unk-penalty
run score-per-word score "$example" --model work/fwd.pt --model work/inv.pt -o work/pw.gz --per-word
run score-two score "$example" --model work/fwd.pt --model work/inv.pt -o work/two.gz
run score-ensemble score "$example" --model work/fwd.pt --model work/fwd.pt -o work/ens.gz --ensemble
run score-units score "$example" --model work/fwd.pt -o work/units.gz --unit-lines 700 --chunk-size 300
run score-stdout score "$example" --model work/fwd.pt -o -
for name in prob log wp pw two ens units; do keep "work/$name.gz" "table-$name.txt"; done
keep work/score-stdout.stdout table-stdout.txt

run top-model top-targets "$example" --model work/fwd.pt -o work/top-model.md
run top-column top-targets "$example" --column 3 --csv -o work/top-column.csv
run generate generate work/fwd.pt --source "the lord" --source "and he said" --beam 3 --samples 5 -o work/generate.md
run translate translate work/sent.pt --input work/nbest.en -o work/translate.txt --beam 3
run nbest-sent moses rescore-nbest work/nbest.txt --source work/nbest.en --model work/sent.pt -o work/nbest-sent.txt
run add-feature moses add-feature "$data/model/moses.ini" --table work/wp.gz -o work/moses.ini \
    --new-columns rnn,wp
sed "s#$out/##g" work/moses.ini >moses.ini
for name in top-model.md top-column.csv generate.md translate.txt nbest-sent.txt; do keep "work/$name" "$name"; done

fails bad-table score work/bad-table.gz --model work/fwd.pt -o work/x.gz
fails column-zero top-targets "$example" --column 0
fails missing-model score "$example" --model work/none.pt -o work/x.gz
fails model-as-table score work/fwd.pt --model work/fwd.pt -o work/x.gz
fails no-source train -o work/x.pt
fails arch-setting train "$example" -o work/x.pt --decoder-layers 2
fails both-batchings train "$example" -o work/x.pt --batch-size 64 --batch-tokens 500
fails exists score "$example" --model work/fwd.pt -o work/prob.gz
fails ensemble-one score "$example" --model work/fwd.pt --ensemble -o work/x.gz
fails nbest-phrase moses rescore-nbest work/nbest.txt --source work/nbest.en --model work/fwd.pt \
    --mode phrase -o work/x.txt
