/* Compiles <collbench/transport.h> alone: a public header includes what it
 * uses. */
#include <collbench/transport.h>

int main(void)
{
	return 0;
}
