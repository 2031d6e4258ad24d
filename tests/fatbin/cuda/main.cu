// Host program for the executable variants: never launches (no GPU needed).
void launch_all(int *p, float *out, double *dout);
int main(int argc, char **argv) { if (argc > 99) launch_all(0, 0, 0); return 0; }
