# Loads a pickle the way PyTorch's flight-recorder analyzer does and prints what it reads:
# the C++ test compares that text.
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    dump = pickle.load(f)
print(repr(dump))
