// A host program around vadd.cu's kernel: its executable carries the fatbin.
int main() { return 0; }
