/* make bench: an empty dynamically linked program, the floor of a start */
int main(void)
{
	return 0;
}
