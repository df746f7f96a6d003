/* Compiles <collbench/status.h> alone: a public header includes what it uses.
 */
#include <collbench/status.h>

int main(void)
{
	return 0;
}
