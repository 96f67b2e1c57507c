"""Stand-in for Moses programs in tests (CI has no Moses). Installed under several names;
it records its argv and writes the files the real program writes, copied from the real
mert-moses.pl run in shared/data/bible-en-fr (tuning/, eval/), never invented.

Settings come from fake.json at the fake Moses root: {"fixtures": DIR, "stop_after": N|null,
"converge_after": N|null, "hang_after": N|null, "without_nplm": bool}; without_nplm: a Moses
built without NPLM, which refuses an ini's NeuralLM line as the real one does; hang_after: after iteration N it decodes
forever, in a child as the real script runs `sh -c moses ...`, and says so in hanging.json. The fixture's run was stopped by hand after iteration 11; the
stand-in ends there (or at converge_after) as a converged run ends, and at
--maximum-iterations as the real script does, printing the real script's messages. After its
loop it does what the real script does: copy init.opt and mert.log to run<run>.*, and mark
<run> finished, where run is max + 1 when the limit stopped it (an iteration never run).

filter-model-given-input.pl is the real script's algorithm (phrases of up to 10 input words,
factor 0, the ini lines it rewrites), checked against the fixture's filtered table.
"""

import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOOL = Path(sys.argv[0]).name


def find_root() -> Path:
    here = Path(sys.argv[0]).resolve()
    for parent in here.parents:
        if (parent / "fake.json").is_file():
            return parent
    sys.exit(f"{TOOL}: fake.json not found above {here}")


ROOT = find_root()
SETTINGS = json.loads((ROOT / "fake.json").read_text())
FIXTURES = Path(SETTINGS["fixtures"])


def record() -> None:
    with open(ROOT / "calls.jsonl", "a") as log:
        log.write(json.dumps({"tool": TOOL, "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")


def mert_moses() -> int:
    """Like mert-moses.pl: 4 positionals, --opt=value options; per-iteration files, then moses.ini."""
    positional = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = dict(a[2:].partition("=")[::2] for a in sys.argv[1:] if a.startswith("--"))
    if len(positional) != 4:
        print("usage: mert-moses.pl input-text references decoder-executable decoder.ini", file=sys.stderr)
        return 1
    config = Path(positional[3]).resolve()  # the real script makes it absolute too
    found = references(positional[1])  # the real script looks for them before it decodes
    if found is None:
        return 2
    problem = neural_lm_problem(str(config), load=True)
    if problem:  # the real script's first decoding dies the same way
        print(f"{problem}\nExit code: 1\nThe decoder died. CONFIG WAS {config}", file=sys.stderr)
        return 1
    with open(ROOT / "references.jsonl", "a") as log:  # for the tests: what the extractor would read
        log.write(json.dumps(found) + "\n")
    work = Path(options.get("working-dir", "mert-work"))
    work.mkdir(parents=True, exist_ok=True)
    os.chdir(work)
    tuning = FIXTURES / "tuning"
    last = int((tuning / "finished_step.txt").read_text())
    if SETTINGS.get("converge_after"):
        last = min(last, SETTINGS["converge_after"])
    maximum = int(options.get("maximum-iterations", 25))
    start = 1
    if "continue" in options:
        step = Path("finished_step.txt")
        if not step.is_file():  # the real script dies the same way
            print("finished_step.txt: No such file or directory", file=sys.stderr)
            return 2
        start = int(step.read_text()) + 1
        print(f"Last finished step is {start - 1}", file=sys.stderr)
    for name in ("features.list", "init.opt"):
        shutil.copyfile(tuning / name, name)
    run = start - 1
    while run < last:
        run += 1
        if run > maximum:
            print("Maximum number of iterations exceeded - stopping", flush=True)
            break
        print(f"run {run} start", flush=True)
        for suffix in ("moses.ini", "dense", "init.opt", "weights.txt", "mert.log"):
            shutil.copyfile(tuning / f"run{run}.{suffix}", f"run{run}.{suffix}")
        with gzip.open(tuning / f"run{run}.out.gz", "rb") as src, open(f"run{run}.out", "wb") as out:
            shutil.copyfileobj(src, out)  # the real script leaves the 1-best output plain
        shutil.copyfile(tuning / f"run{run}.init.opt", "init.opt")
        shutil.copyfile(tuning / f"run{run}.mert.log", "mert.log")
        shutil.copyfile(tuning / f"run{run}.weights.txt", "weights.txt")
        Path("finished_step.txt").write_text(f"{run}\n")
        print(f"run {run} end", flush=True)
        if SETTINGS.get("hang_after") == run:
            hang()
        if SETTINGS.get("stop_after") == run:
            print("Killed", file=sys.stderr)
            return 137
        if run == last:
            print("None of the weights changed more than 1e-05. Stopping.", file=sys.stderr)
    # mert-moses.pl after its loop (see its source): `cp -f init.opt run$run.init.opt`,
    # `cp -f mert.log run$run.mert.log`, create_config, save_finished_step($run). Stopped by
    # --maximum-iterations, $run is max + 1 there, so run<max+1>.{init.opt,mert.log} are copies
    # of the last iteration's and finished_step.txt says max + 1.
    shutil.copyfile("init.opt", f"run{run}.init.opt")
    shutil.copyfile("mert.log", f"run{run}.mert.log")
    best = Path("mert.log").read_text()
    point, bleu = re.search(r"Best point:\s*([\s\d.\-e]+?)\s*=> ([\-\d.]+)", best).groups()
    flags = options.get("decoder-flags", "")
    create_config(config, Path("moses.ini"), point.split(), run, bleu,
                  positional[2], positional[0], flags)
    Path("finished_step.txt").write_text(f"{run}\n")
    print("Training finished", flush=True)
    return 0


def references(given: str):
    """The reference files, by mert-moses.pl's rule (its source): a file is the one reference;
    otherwise a prefix, followed by 0, 1, ... (or by .ref0, .ref1, ... when PREFIX0 does not
    exist but PREFIX.ref0 does); none found: it dies saying so."""
    ref = os.path.abspath(given)
    if os.path.exists(ref):
        return [ref]
    if not os.path.exists(ref + "0") and os.path.exists(ref + ".ref0"):
        ref += ".ref"
    found = []
    while os.path.exists(ref + str(len(found))):
        found.append(ref + str(len(found)))
    if not found:
        print(f"Reference translations not found: {given} (interpreted as {ref})", file=sys.stderr)
        return None
    return found


def hang() -> None:
    """A decoder that never ends, as a child; the pids go to hanging.json (written whole)."""
    decoder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path("hanging.tmp").write_text(json.dumps({"script": os.getpid(), "decoder": decoder.pid}))
    os.replace("hanging.tmp", "hanging.json")
    decoder.wait()


def create_config(original: Path, out_path: Path, best: list, run: int, bleu: str,
                  decoder: str, dev: str, flags: str) -> None:
    """mert-moses.pl's create_config: the original ini, its [weight] section replaced by the
    tuned weights (feature order of features.list), the --decoder-flags as [sections]. A weight
    the fixture's run has no value for (a new column) keeps the ini's value, as -show-weights
    prints it."""
    features = (FIXTURES / "tuning" / "features.list").read_text().split("\n")
    untuneable = [line.split()[0] for line in features if line.endswith("UNTUNEABLE")]
    counts = {line.split("=")[0]: len(line.split()) - 1 for line in features if "= " in line}
    lines = original.read_text().splitlines(keepends=True)
    weights, sections, keep = {}, [], []
    position = 0 if re.match(r"^\[(.+)\]\s*$", lines[0]) else 1  # the script skips line 1
    while position < len(lines):
        match = re.match(r"^\[(.+)\]\s*$", lines[position])
        if not match:
            if lines[position].startswith("#") or re.match(r"^\s+$", lines[position]):
                sections.append(lines[position])
            position += 1
            continue
        name, position = match.group(1), position + 1
        body = []
        while position < len(lines) and not lines[position].startswith("["):
            body.append(lines[position])
            position += 1
        if name == "weight":
            for line in body:
                found = re.match(r"^(\S+)= (.+)$", line)
                if found:
                    weights[found.group(1)] = found.group(2).split(" ")
                    keep += [line] if found.group(1) in untuneable else []
        elif name not in _decoder_sections(flags):
            sections += [f"[{name}]\n"] + body
    values = iter(best)
    fixture = {name: [next(values) for _ in range(count)] for name, count in counts.items()}
    tuned = {name: fixture[name][:len(weights[name])] for name in fixture if name in weights}
    for name in weights:
        if name not in untuneable:
            known = tuned.get(name, [])
            tuned[name] = known + [f"{float(v):f}" for v in weights[name][len(known):]]
    with open(out_path, "w") as out:
        out.write(f"# MERT optimized configuration\n# decoder {decoder}\n# BLEU {bleu} on dev {dev}\n"
                  f"# We were before running iteration {run}\n# finished {datetime.datetime.now():%c}\n")
        out.writelines(sections)
        for name, values in sorted(_decoder_sections(flags).items()):
            out.write(f"\n[{name}]\n" + "".join(f"{v}\n" for v in values))
        out.write("[weight]\n\n")
        out.writelines(f"{name}= {' '.join(values)}\n" for name, values in tuned.items())
        out.writelines(keep)


def _decoder_sections(flags: str) -> dict:
    """create_config's parsing of --decoder-flags: `-name value ...` into [name] sections."""
    sections, name = {}, None
    for token in re.sub(r"\s+", " ", flags.strip(), count=1).split(" "):
        if re.match(r"^--?([^\d].*)$", token):
            name = token.lstrip("-")
        elif token:
            sections.setdefault(name, []).append(token)
    return sections


def neural_lm_problem(ini_path: str, load: bool):
    """What the real decoder says of the ini's NeuralLM lines (None: nothing): without NPLM, that
    the feature is not registered (moses/FF/Factory.cpp; -show-weights builds the features too);
    loading (not for -show-weights), NPLM's message for a file it cannot open, and
    NeuralLMWrapper::Load's for a model whose ngram_size is not the line's order."""
    lines, section = [], None
    for line in Path(ini_path).read_text().splitlines():
        if re.match(r"^\s*\[(.+)\]\s*$", line):
            section = line.strip()[1:-1]
        elif section == "feature" and line.split()[:1] == ["NeuralLM"]:
            lines.append(dict(token.split("=", 1) for token in line.split()[1:]))
    if lines and SETTINGS.get("without_nplm"):
        return ("Exception: moses/FF/Factory.cpp:390 in void Moses::FeatureRegistry::Construct(const std::string&, "
                "const std::string&) threw UnknownFeatureException because `i == registry_.end()'.\n"
                "Feature name NeuralLM is not registered.")
    for args in lines if load else []:
        try:
            config = Path(args["path"]).read_text().split("\n\n")[0].splitlines()
        except OSError:
            return f"Exception: Could not open file {args['path']}"
        order = next(line.split()[1] for line in config if line.startswith("ngram_size "))
        if order != args["order"]:
            return (f"Exception: moses/LM/NeuralLMWrapper.cpp:43 in virtual void Moses::NeuralLMWrapper::Load"
                    f"(const AllOptions::ptr&) threw util::Exception.\nWrong order of neuralLM: LM has {order}, "
                    f"but Moses expects {args['order']}")
    return None


def decoder() -> int:
    """Like bin/moses: -show-weights prints features.list; else one line out per line in."""
    ini = sys.argv[sys.argv.index("-f") + 1] if "-f" in sys.argv else None
    problem = ini and neural_lm_problem(ini, load="-show-weights" not in sys.argv)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    if "-show-weights" in sys.argv:
        sys.stdout.write((FIXTURES / "tuning" / "features.list").read_text())
        return 0
    with gzip.open(FIXTURES / "eval" / "test.hyp.fr.gz", "rt", encoding="utf-8") as handle:
        outputs = handle.read().splitlines(keepends=True)
    count = 0
    for count, _ in enumerate(sys.stdin.buffer, start=1):
        sys.stdout.write(outputs[(count - 1) % len(outputs)])
    if "-n-best-list" in sys.argv:
        at = sys.argv.index("-n-best-list")
        write_nbest(sys.argv[at + 1], int(sys.argv[at + 2]), count)
    return 0


def write_nbest(path: str, size: int, sentences: int) -> None:
    """-n-best-list FILE N distinct: sentence i gets the fixture's dev 100-best of sentence
    i mod 842 (the real decoder's lines), at most N of them, renumbered i."""
    lists = {}
    with gzip.open(FIXTURES / "tuning" / "run1.best100.out.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            lists.setdefault(int(line.split(" ||| ")[0]), []).append(line.split(" ||| ", 1)[1])
    with (gzip.open(path, "wt", encoding="utf-8") if path.endswith(".gz") else open(path, "w")) as out:
        for i in range(sentences):
            out.writelines(f"{i} ||| {rest}" for rest in lists[i % len(lists)][:size])


def _open_table(path: str):
    """mk_open_string: gzip by name, or the .gz beside a name without it."""
    if not path.endswith(".gz") and os.path.exists(path + ".gz"):
        path += ".gz"
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def _set_value(tokens: list, key: str, value: str) -> list:
    return [f"{key}={value}" if t.split("=")[0] == key and i else t for i, t in enumerate(tokens)]


def filter_model() -> int:
    """filter-model-given-input.pl DIR moses.ini input: keep the lines of each text phrase table
    and reordering table whose source phrase is a phrase of the input."""
    directory, config, source = [os.path.abspath(a) for a in sys.argv[1:4]]
    if os.path.isdir(directory):
        if not os.path.exists(f"{directory}/info"):
            print(f"The directory {directory} already exists. Please delete {directory} and rerun!",
                  file=sys.stderr)
            return 1
        print(f"The filtered model was ready in {directory}, not doing anything.", file=sys.stderr)
        return 0
    os.makedirs(directory)
    tables, used, numbers = [], {}, {}
    with open(config) as ini, open(f"{directory}/moses.ini", "w") as out:
        for line in ini:
            line = line.rstrip("\n")
            tokens = line.split(" ")
            args = dict(t.split("=", 1) for t in tokens[1:] if "=" in t)
            if tokens[0] == "PhraseDictionaryMemory" and args.get("filterable") != "false" \
                    and "glue-grammar" not in args.get("path", ""):
                factors = f"{args['input-factor']}-{args['output-factor']}"
                numbers[factors] = numbers.get(factors, 0) + 1
                name = f"{directory}/phrase-table.{factors}.{numbers[factors]}"
            elif re.search(r"LexicalReordering ", line):
                base = re.sub(r"\.gz", "", re.sub(r"^.*/+([^/]+)", r"\1", args["path"]), count=1)
                name = f"{directory}/{base}.{args['input-factor']}-{args['output-factor']}"
            else:
                out.write(line + "\n")
                continue
            count = 1
            while f"{name}.{count}" in used:
                count += 1
            name = f"{name}.{count}"
            used[name] = True
            new_name = name + (".gz" if tokens[0] == "PhraseDictionaryMemory" else "")
            out.write(" ".join(_set_value(tokens, "path", new_name)) + " \n")
            tables.append((args["path"], new_name))
    phrases = set()
    with open(source, "rb") as text:
        for line in text:
            words = re.split(b" +", line.rstrip(b"\n"))
            while words and words[-1] == b"":
                words.pop()  # perl's split drops trailing empty fields
            words = [w.split(b"|")[0] for w in words]
            for i in range(len(words)):
                for j in range(min(10, len(words) - i)):
                    phrases.add(b" ".join(words[i:i + j + 1]))
    for path, new_name in tables:
        with _open_table(path) as table, \
                (gzip.open(new_name, "wb") if new_name.endswith(".gz") else open(new_name, "wb")) as out:
            for entry in table:
                foreign = entry.split(b" ||| ", 1)[0]
                if foreign.endswith(b" "):
                    foreign = foreign[:-1]
                if foreign in phrases:
                    out.write(entry)
    with open(f"{directory}/info", "w") as info:
        info.write(f"{config}\n{source}\n")
    return 0


def compact() -> int:
    """processPhraseTableMin: records its arguments; writes an empty stand-in .minphr where the
    real one does. Its rule (processPhraseTableMin.cpp): append ".minphr" unless
    `outFilePath.rfind(".minphr") != outFilePath.size() - 7` is false, in size_t arithmetic, so
    a 6-character name (both sides npos) gets no suffix."""
    args = sys.argv[1:]
    out = args[args.index("-out") + 1]
    npos = 2 ** 64 - 1
    found = out.rfind(".minphr")
    if (npos if found == -1 else found) != (len(out) - 7) % 2 ** 64:
        out += ".minphr"
    Path(out).write_bytes(b"")
    return 0


def _options(argv: list, short: dict) -> dict:
    """`--name value`, `--name=value` and `-x value` options (getopt_long's forms), by long name."""
    options, position = {}, 0
    while position < len(argv):
        arg = argv[position]
        name, _, value = arg.lstrip("-").partition("=")
        name = short.get(name, name)
        if not value and position + 1 < len(argv) and not argv[position + 1].startswith("-"):
            value, position = argv[position + 1], position + 1
        options[name] = value
        position += 1
    return options


def _ngrams(tokens: list) -> dict:
    counts = {}
    for n in range(1, 5):
        for i in range(len(tokens) - n + 1):
            gram = tuple(tokens[i:i + n])
            counts[gram] = counts.get(gram, 0) + 1
    return counts


def _tokens(text: str, preserve_case: bool) -> list:
    """Scorer::TokenizeAndEncode: split on ' ' only, empty tokens skipped; lowercased unless case:true."""
    return [t if preserve_case else t.lower() for t in text.split(" ") if t]


def _float32(value: str) -> float:
    import struct
    return struct.unpack("f", struct.pack("f", float(value)))[0]


def _g(value: float) -> str:
    """A float as C++'s ostream prints it (precision 6, like %g)."""
    return "%g" % value


def extractor() -> int:
    """Moses' extractor with the BLEU scorer (mert/extractor.cpp, Data.cpp, BleuScorer.cpp):
    per hypothesis of the n-best list its dense features and its 9 BLEU statistics (clipped
    n-gram matches and counts, n = 1..4, then the closest reference length, the shorter of two
    equally close), duplicates removed by Data::removeDuplicates' swap-to-the-end rule."""
    options = _options(sys.argv[1:], {"S": "scfile", "F": "ffile", "r": "reference", "n": "nbest"})
    preserve_case = "case:false" not in options.get("scconfig", "")
    references = []
    for path in options["reference"].split(","):
        data = Path(path).read_bytes()
        if data[:2] == b"\x1f\x8b":
            print(f"stand-in extractor: {path} is gzipped; the real extractor reads references with an "
                  f"ifstream and would score against the compressed bytes", file=sys.stderr)
            return 1
        references.append(data.decode("utf-8").split("\n")[:-1] if data.endswith(b"\n")
                          else data.decode("utf-8").split("\n"))
    ref_stats = []
    for lines in zip(*references):
        counts, lengths = {}, []
        for line in lines:
            tokens = _tokens(line, preserve_case)
            lengths.append(len(tokens))
            for gram, count in _ngrams(tokens).items():
                counts[gram] = max(counts.get(gram, 0), count)
        ref_stats.append((counts, lengths))
    opener = gzip.open if open(options["nbest"], "rb").read(2) == b"\x1f\x8b" else open
    sentences, names = {}, None
    with opener(options["nbest"], "rb") as nbest:
        for raw in nbest:
            line = raw.decode("utf-8").rstrip("\n")
            if not line:
                continue
            fields = line.split("|||")
            index = int(fields[0])
            tokens = _tokens(fields[1], preserve_case)
            counts, lengths = ref_stats[index]
            stats = [0] * 8
            for gram, guess in _ngrams(tokens).items():
                stats[2 * len(gram) - 2] += min(counts.get(gram, 0), guess)
                stats[2 * len(gram) - 1] += guess
            closest = 0
            for i, length in enumerate(lengths):  # Reference::CalcClosest
                if abs(length - len(tokens)) < abs(lengths[closest] - len(tokens)):
                    closest = i
                elif abs(length - len(tokens)) == abs(lengths[closest] - len(tokens)) and length < lengths[closest]:
                    closest = i
            stats.append(lengths[closest])
            values, feature_names, name, k = [], [], None, 0
            for token in fields[2].split():
                if token.endswith("="):
                    name, k = token[:-1], 0
                    continue
                values.append(_float32(token))
                feature_names.append(f"{name}_{k}")
                k += 1
            names = names or feature_names
            sentences.setdefault(index, ([], []))
            sentences[index][0].append(tuple(values))
            sentences[index][1].append(tuple(stats))
    if "allow-duplicates" not in options and "d" not in options:
        for feats, scores in sentences.values():
            _remove_duplicates(feats, scores)
    with open(options["ffile"], "w") as out:
        for index, (feats, _) in sentences.items():
            out.write(f"FEATURES_TXT_BEGIN_0 {index} {len(feats)} {len(names)} {' '.join(names)} \n")
            out.writelines("".join(_g(v) + " " for v in values) + "\n" for values in feats)
            out.write("FEATURES_TXT_END_0\n")
    with open(options["scfile"], "w") as out:
        for index, (_, scores) in sentences.items():
            out.write(f"SCORES_TXT_BEGIN_0 {index} {len(scores)} 9 BLEU\n")
            out.writelines("".join(_g(v) + " " for v in stats) + "\n" for stats in scores)
            out.write("SCORES_TXT_END_0\n")
    return 0


def _remove_duplicates(feats: list, scores: list) -> None:
    """Data::removeDuplicates: a repeat of an earlier (features, scores) is swapped with the last
    kept entry and dropped, so the order of the rest changes as the real program's does."""
    lookup, end, k = {}, len(feats) - 1, 0
    while k <= end:
        total = 0.0
        for value in feats[k]:
            total += value
        seen = lookup.setdefault(total, [])
        for j in seen:
            if feats[k] == feats[j] and scores[k] == scores[j]:
                if k < end:
                    feats[k], feats[end] = feats[end], feats[k]
                    scores[k], scores[end] = scores[end], scores[k]
                    k -= 1
                end -= 1
                break
        else:
            seen.append(k)
        k += 1
    del feats[end + 1:], scores[end + 1:]


def _fixture_point(names: list, start: list):
    """The weights the fixture's first mert run found, for the fixture's 14 features in its
    order, then each further feature's starting weight (only a real optimizer could move it);
    None when the names do not begin with the fixture's."""
    tuning = FIXTURES / "tuning"
    with gzip.open(tuning / "run1.features.dat.gz", "rt") as handle:
        fixture_names = handle.readline().split()[4:]
    if names[:len(fixture_names)] != fixture_names:
        return None, None
    log = (tuning / "run1.mert.log").read_text()
    point, bleu = re.search(r"Best point:\s*([\s\d.\-e]+?)\s*=> ([\-\d.]+)", log).groups()
    return point.split() + [_g(w) for w in start[len(fixture_names):]], bleu


def _header_names(feature_files: str) -> list:
    path = feature_files.split(",")[0]
    with open(path) as handle:
        return handle.readline().split()[4:]


def mert() -> int:
    """mert -d N --ffile F --scfile S --ifile init.opt -n R -r SEED: the real program's log on
    stderr, ending `Best point: ... => BLEU`, and weights.txt, with the fixture's weights."""
    options = _options(sys.argv[1:], {"d": "dim", "n": "restarts", "r": "seed"})
    names = _header_names(options["ffile"])
    if int(options["dim"]) != len(names):
        print(f"Error: the feature file has {len(names)} features, -d says {options['dim']}", file=sys.stderr)
        return 1
    start = Path(options["ifile"]).read_text().splitlines()[0].split()
    point, bleu = _fixture_point(names, [float(v) for v in start])
    if point is None:
        print("stand-in mert: the features are not the fixture's", file=sys.stderr)
        return 1
    print(f"shard_size = 0 shard_count = 0\nSeeding random numbers with {options.get('seed', 0)}\n"
          f"name: case value: true\nData::m_score_type BLEU\nData::Scorer type from Scorer: BLEU\n"
          f"Loading Data from: {options['scfile']} and {options['ffile']}\n"
          f"Creating a pool of 1 threads\nBest point: {' '.join(point)}  => {bleu}\n"
          f"Stopping... : [Wall 0.1 CPU 0.1] seconds.", file=sys.stderr)
    Path("weights.txt").write_text(" ".join(point) + " \n")
    return 0


def kbmira() -> int:
    """kbmira --dense-init FILE --ffile F --scfile S -r SEED -o OUT: `F<i> weight` lines and
    `Best BLEU = ...` on stderr, with the fixture's weights."""
    options = _options(sys.argv[1:], {"d": "dense-init", "r": "random-seed", "o": "output-file",
                                      "F": "ffile", "S": "scfile"})
    names = _header_names(options["ffile"])
    start = [float(line.split("= ")[1]) for line in Path(options["dense-init"]).read_text().splitlines()]
    point, bleu = _fixture_point(names, start)
    if point is None or len(start) != len(names):
        print("stand-in kbmira: the features are not the fixture's", file=sys.stderr)
        return 1
    print(f"kbmira with c=0.01 decay=0.999 no_shuffle=0\nInitialising random seed to "
          f"{options.get('random-seed')}\nBest BLEU = {bleu}", file=sys.stderr)
    Path(options["output-file"]).write_text("".join(f"F{i} {w}\n" for i, w in enumerate(point)))
    return 0


if __name__ == "__main__":
    record()
    if SETTINGS.get("hang_in") == TOOL:  # a long run of this program, for a signal to land in
        subprocess.run([sys.executable, "-c", "import time; time.sleep(600)"])
    if SETTINGS.get("fail_in") == TOOL:  # this program failing, as one short of memory does
        print("Killed", file=sys.stderr)
        sys.exit(137)
    handlers = {"mert-moses.pl": mert_moses, "moses": decoder, "processPhraseTableMin": compact,
                "filter-model-given-input.pl": filter_model, "extractor": extractor, "mert": mert,
                "kbmira": kbmira}
    sys.exit(handlers.get(TOOL, lambda: 0)())
