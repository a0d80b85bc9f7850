#!/usr/bin/env python3
"The corpus builder's old path, for the GPU machine's tree (no installed console scripts): `lengen_build_corpus` (lengen.corpus)."
import sys; from lengen.corpus import main; sys.exit(main())
