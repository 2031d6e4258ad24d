"""`make demo`: show cricket working end to end with what is built so far."""
import sys

print("cricket demo: no feature is built yet in this checkout.", file=sys.stderr)
sys.exit(1)
