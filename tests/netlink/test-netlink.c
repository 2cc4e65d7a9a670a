#include "test.h"
int main(void) { return test_end("test-netlink"); }
