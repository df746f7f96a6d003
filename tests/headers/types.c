/* Compiles <collbench/types.h> alone: a public header includes what it uses. */
#include <collbench/types.h>

int main(void)
{
	return 0;
}
