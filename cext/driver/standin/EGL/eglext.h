/* Empty stand-in, found only when the system lacks the real header: gen_driver.py preprocesses
 * the CUDA interop headers to learn their function names, never their types. */
