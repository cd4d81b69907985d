import sys
sys.dont_write_bytecode = True
import glob, importlib.util, json, os
here = os.path.dirname(os.path.abspath(__file__))
out = []
for path in sorted(glob.glob(os.path.join(here, "b[0-9][0-9].py"))):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    for fid, dom, intents in m.FAMS:
        out.append({"family": fid, "domain": dom, "intents": [
            {"intent": i, "answer": a, "questions": list(qs)} for i, a, qs in intents]})
with open(os.path.join(here, "families.jsonl"), "w", encoding="utf-8") as f:
    for o in out:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
print("wrote", len(out), "families")
